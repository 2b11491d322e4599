"""Every node below one node, with its parent, from one libclang traversal.

`Node.children()` costs a traversal (and a Python callback per child) for every node it is asked about; a rule
that needs the whole shape of a function body (a path walk over its statements) reads it here in one pass instead.
"""

from __future__ import annotations

import clang.cindex as cindex

from hexlint.c.node import Node, kind_name

_RECURSE = 2


def preorder_with_parents(root: Node) -> list[tuple[Node, int]]:
    """The nodes strictly below `root` in source (pre-)order, each with its parent's index in the list (-1: root)."""
    found: list[tuple[Node, int]] = []
    cursors: list[cindex.Cursor] = []
    stack: list[int] = []  # indices of the open ancestors of the node being visited
    equal = cindex.conf.lib.clang_equalCursors
    root_cursor = root.raw
    translation_unit = getattr(root_cursor, "_tu", None)

    def visit(cursor: cindex.Cursor, parent: cindex.Cursor, _data: object) -> int:
        while stack and not equal(cursors[stack[-1]], parent):
            stack.pop()
        parent_index = stack[-1] if stack else -1
        if translation_unit is not None:
            cursor._tu = translation_unit
        found.append((Node(cursor, kind_name(cursor._kind_id)), parent_index))
        cursors.append(cursor)
        stack.append(len(found) - 1)
        return _RECURSE

    cindex.conf.lib.clang_visitChildren(root_cursor, cindex.cursor_visit_callback(visit), [])
    return found
