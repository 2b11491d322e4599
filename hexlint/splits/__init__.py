"""`hexlint splits`: the graph splits of the Hexagon backend, from llama.cpp's scheduler dumps (GGML_SCHED_DEBUG=2 -v)
and the backend's supports-op lines (GGML_HEXAGON_VERBOSE=1): NPU segments and the boundaries that end them, each
classed hard (no HTP kernel), movable (a supports_op predicate rejected the node) or free."""
