"""The model of a backend tree, computed once per project and queried by the source rules.

Ops and dispatch, entry points and workers, kernel_params fields and their flows, pointer provenance, DMA queue
operations, VTCM-derived pointers, trace events and loops: facts only, no messages and no rule codes. Each topic is a
module of its own; `hexlint.backend.model` joins them behind one object the rules query.
"""
