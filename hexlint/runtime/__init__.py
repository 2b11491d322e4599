"""Runtime logs of the Hexagon backend: the `ggml-hex:` lines its host prints (supports-op, profile-op, trace-evt),
read into records, and the op traces `hexlint trace` checks (rules HX3xx)."""
