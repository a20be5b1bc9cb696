"""The network edge: the WebSocket transport, HTTP, frames and wire messages, budgets."""
