"""hexlint: static analysis for the Hexagon NPU backend of llama.cpp / ggml."""

__version__ = "0.1.0"
