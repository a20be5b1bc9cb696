"""Real-time bounds on what a test does not judge: they only keep a broken run from hanging.

A server process starting (interpreter, imports, a store opened, a log recovered) is not
what any test here measures, and on a machine busy with other work (``stress-ng`` on both
cores, or a pytest worker beside it compiling every module) one start-up line was seen to
take over 20 s: a bound that is a failure only when the process is truly stuck.
"""

from __future__ import annotations

STARTUP_SECONDS = 60.0
"""The longest wait for the next line a starting server process writes."""
