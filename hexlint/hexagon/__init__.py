"""Hexagon machine code: packets and instructions (decode.py), control flow (cfg.py); no knowledge of rules."""
