"""What every part of the shell is given: settings, logs, metrics and the clock."""
