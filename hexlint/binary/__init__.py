"""The binary audit of built HTP kernels: audit.py (facts), findings.py (diagnostics), gate.py (build to build),
disasm.py (annotated listing), addr2line.py (crash addresses), options.py + run.py (the CLI's entry points)."""
