"""Running a tool: argument checks, the handler policy and network guard, handler runners, idempotency."""
