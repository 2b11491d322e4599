"""The C front end: the only package that imports clang.cindex."""
