"""Count a DOT graph's nodes and edges from its statements, as Graphviz reads them.

A node counts once however it appears: declared on its own (``a [label="x"]``), named only
in an edge (``a -> b``), inside a subgraph or cluster, quoted or not, with a port
(``a:out``). An edge statement ``a -> b -> c`` is two edges, and ``a -> {b c}`` is two:
one to each node of the subgraph; a ``strict`` graph keeps one edge per pair of nodes.
Attribute statements (``node [shape=box]``, ``rankdir=LR``) are not nodes.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*       # space and comments (skipped)
    |(?P<id>"(?:[^"\\]|\\.)*"|-?(?:\.\d+|\d+(?:\.\d*)?)|[A-Za-z_\x80-\uffff][\w\x80-\uffff]*)
    |(?P<html><)|(?P<op>->|--)|(?P<punct>[{}\[\];,=:])""",
    re.VERBOSE | re.DOTALL | re.MULTILINE,
)
_KEYWORDS = frozenset({"graph", "digraph", "subgraph", "node", "edge", "strict"})


def _html_end(text: str, start: int) -> int:
    """Index just past the `>` that closes the HTML string opened at `start`."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    raise ValueError(
        "DOT text has an HTML label that never closes (a '<' without its '>')."
    )


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) pairs: kind is "id", "keyword", "op" or the punctuation itself."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ValueError(
                f"DOT text has {text[pos : pos + 20]!r} where no token can start."
            )
        if match.group("html"):
            end = _html_end(text, pos)
            out.append(("id", text[pos:end]))
            pos = end
            continue
        if match.group("id"):
            word = match.group("id")
            out.append(
                ("keyword" if word.lower() in _KEYWORDS else "id", word.strip('"'))
            )
        elif match.group("op") or match.group("punct"):
            kind = "op" if match.group("op") else match.group("punct")
            out.append((kind, match.group(0)))
        pos = match.end()
    return out


class _Counter:
    def __init__(self, toks: list[tuple[str, str]]) -> None:
        self.toks, self.i = toks, 0
        self.nodes: dict[str, None] = {}
        self.edges = 0
        # a strict graph keeps one edge per pair of nodes (either way round, undirected)
        self.pairs: set[frozenset | tuple] | None = None
        self.directed = True

    def peek(self, offset: int = 0) -> tuple[str, str]:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.i += 1
        return tok

    def skip_attrs(self) -> None:
        while self.peek()[0] == "[":
            while self.take()[0] not in ("]", "end"):
                pass

    def graph(self) -> None:
        while self.peek()[0] != "{":  # `strict digraph name {`
            kind, text = self.take()
            if kind == "end":
                return
            if kind == "keyword" and text.lower() == "strict":
                self.pairs = set()
            if kind == "keyword" and text.lower() == "graph":
                self.directed = False
        self.block()

    def edge(self, tail: str, head: str) -> None:
        if self.pairs is None:
            self.edges += 1
        else:
            self.pairs.add((tail, head) if self.directed else frozenset((tail, head)))
            self.edges = len(self.pairs)

    def block(self) -> list[str]:
        """Statements between braces; the nodes they name (for edges to a subgraph)."""
        self.take()  # {
        named: list[str] = []
        while self.peek()[0] not in ("}", "end"):
            named += self.statement()
        self.take()
        return named

    def operand(self) -> list[str]:
        kind, text = self.peek()
        if kind == "{" or (kind, text.lower()) == ("keyword", "subgraph"):
            if kind == "keyword":
                self.take()
                if self.peek()[0] == "id":
                    self.take()
            return self.block()
        self.take()
        if self.peek()[0] == ":":  # a port: a:out or a:out:n
            self.take()
            self.take()
            if self.peek()[0] == ":":
                self.take()
                self.take()
        self.nodes.setdefault(text)
        return [text]

    def statement(self) -> list[str]:
        kind, text = self.peek()
        if kind in (";", ","):
            self.take()
            return []
        if kind == "keyword" and text.lower() in ("graph", "node", "edge"):
            self.take()
            self.skip_attrs()
            return []
        if kind == "id" and self.peek(1)[0] == "=":  # a graph attribute: rankdir=LR
            self.i += 3
            return []
        named = left = self.operand()
        while self.peek()[0] == "op":
            self.take()
            right = self.operand()
            for tail in left:
                for head in right:
                    self.edge(tail, head)
            named, left = named + right, right
        self.skip_attrs()
        return named


def count(text: str) -> tuple[int, int]:
    """(distinct nodes, edges) of the DOT graph `text`.

    Example:
        >>> count('digraph { a -> b; subgraph cluster_0 { c [label="x"] } b -> {c d} }')
        (4, 3)
    """
    counter = _Counter(tokens(text))
    counter.graph()
    return len(counter.nodes), counter.edges
