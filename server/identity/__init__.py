"""Who a player is: sessions and ids, display names, sign-in tokens."""
