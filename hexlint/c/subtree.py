"""Every node below one node, with its parent, in one pass over the node's (kept) children."""

from __future__ import annotations

from hexlint.c.node import Node


def preorder_with_parents(root: Node) -> list[tuple[Node, int]]:
    """The nodes strictly below `root` in source (pre-)order, each with its parent's index in the list (-1: root)."""
    found: list[tuple[Node, int]] = []
    stack: list[tuple[Node, int]] = [(child, -1) for child in reversed(root.children())]
    while stack:
        node, parent_index = stack.pop()
        found.append((node, parent_index))
        index = len(found) - 1
        stack.extend((child, index) for child in reversed(node.children()))
    return found
