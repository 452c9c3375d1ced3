"""How jaxtour pictures look: primitive families and their colours, fonts, labels, legend.

One palette for every picture, so `dot_general` is the same orange in a jaxpr, in
StableHLO and in compiled HLO, and a reader learns the colours once.

For other pictures: `family(op)` and `node_attrs(op)` colour a node by what it does;
`FAMILIES` holds the colours; `graph_attrs(title, rankdir, subtitle)`, `NODE`, `EDGE`
set up a `graphviz.Digraph`; `NESTED`, `FUSION`, `SOURCE` style clusters, `INPUT`,
`OUTPUT`, `DEAD` nodes; `text_label(head, *lines)` makes a label both renderers draw;
`Canvas` keeps ids, clusters and edges, and adds the legend (`add_legend`) at the end.

Example:
    >>> family("dot_general"), family("stablehlo.dot_general"), family("all-reduce-start")
    ('matmul', 'matmul', 'collective')
    >>> family("custom-call:__cublas$gemm")
    'matmul'
    >>> node_attrs("add")["fillcolor"] == FAMILIES["elementwise"].fill
    True
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple


class Family(NamedTuple):
    """A family of primitives drawn alike: its legend text, fill and border colours."""

    label: str
    fill: str
    border: str


# Pale fills with darker borders (readable on a projector, distinguishable in greyscale).
FAMILIES: dict[str, Family] = {
    "elementwise": Family("elementwise", "#DCEBFA", "#3A7BC8"),
    "matmul": Family("matmul / contraction", "#FDDCB5", "#D2691E"),
    "reduction": Family("reduction", "#D4EFD8", "#2E8B47"),
    "control flow": Family("control flow", "#E6DCF5", "#7B52BD"),
    "data movement": Family("data movement", "#EAEAEA", "#7A7A7A"),
    "random": Family("random", "#FFF1A8", "#B08F00"),
    "collective": Family("collective", "#F9C9C9", "#C0282D"),
    "other": Family("other", "#FFFFFF", "#555555"),
}

_MEMBERS: dict[str, str] = {}
for _family, _names in {
    "elementwise": "add sub subtract mul multiply div divide neg negate exp exponential exp2 "
    "log log1p log_plus_one expm1 exponential_minus_one sin sine cos cosine tan tanh logistic "
    "max maximum min minimum pow power integer_pow sqrt rsqrt cbrt abs sign floor ceil round "
    "round_nearest_even round_nearest_afz clamp rem remainder atan2 asin acos atan sinh cosh "
    "asinh acosh atanh erf erfc erf_inv lgamma digamma is_finite not and or xor "
    "select select_n "
    "compare eq ne gt ge lt le convert convert_element_type nextafter square imag real conj "
    "complex shift_left shift_right_logical shift_right_arithmetic population_count clz "
    "add_any stop_gradient reduce_precision polygamma igamma",
    "matmul": "dot dot_general conv conv_general_dilated convolution ragged_dot einsum "
    "triangular_solve cholesky",
    "reduction": "reduce reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or "
    "reduce_xor argmax argmin cumsum cumprod cummax cummin cumlogsumexp reduce_window "
    "sort top_k",
    "control flow": "cond while scan jit pjit closed_call core_call call case if conditional "
    "custom_jvp_call custom_vjp_call custom_vjp_call_jaxpr remat remat2 checkpoint shard_map "
    "manual_computation fusion for_loop run_state",
    "data movement": "reshape broadcast broadcast_in_dim transpose slice dynamic_slice "
    "dynamic_update_slice gather scatter scatter_add scatter_mul scatter_min scatter_max "
    "concatenate pad squeeze expand_dims rev reverse iota copy copy_p bitcast tuple "
    "get_tuple_element constant sharding_constraint device_put parameter split "
    "optimization_barrier select_and_scatter_add select_and_gather_add "
    # no bytes cross devices: a type cast marking a value as varying over mesh axes
    # (pvary, once pbroadcast), and a device's own index
    "pvary pbroadcast axis_index",
    "random": "random_bits random_seed random_wrap random_unwrap random_fold_in random_split "
    "threefry2x32 rng_bit_generator rng rng_uniform",
    "collective": "psum pmax pmin pmean all_gather all_to_all ppermute psum_scatter "
    "reduce_scatter all_reduce collective_permute collective_broadcast "
    "psum_invariant ragged_all_to_all",
}.items():
    _MEMBERS.update(dict.fromkeys(_names.split(), _family))

FONT = "Helvetica,Arial,sans-serif"
NODE = {
    "shape": "box",
    "style": "rounded,filled",
    "fontname": FONT,
    "fontsize": "14",
    "margin": "0.12,0.06",
    "penwidth": "1.2",
}
EDGE = {
    "fontname": FONT,
    "fontsize": "10",
    "fontcolor": "#555555",
    "color": "#777777",
    "arrowsize": "0.7",
}
# Clusters: a nested jaxpr or region, a fusion, a group of eqns from one source line.
NESTED = {
    "style": "rounded,filled",
    "fillcolor": "#F8F5FD",
    "color": "#7B52BD",
    "fontname": FONT,
    "fontsize": "13",
    "penwidth": "1.4",
}
FUSION = {
    "style": "rounded,filled",
    "fillcolor": "#FFF6DC",
    "color": "#C58B00",
    "fontname": FONT,
    "fontsize": "13",
    "penwidth": "2.2",
}
SOURCE = {
    "style": "rounded,filled",
    "fillcolor": "#F3F5F7",
    "color": "#98A4B0",
    "fontname": FONT,
    "fontsize": "12",
    "penwidth": "1.0",
}
INPUT = {
    "shape": "box",
    "style": "rounded,filled,bold",
    "fillcolor": "#FFFFFF",
    "color": "#222222",
    "fontname": FONT,
    "fontsize": "13",
}
OUTPUT = {**INPUT, "fillcolor": "#2B2B2B", "fontcolor": "#FFFFFF"}
DEAD = {
    "style": "rounded,dashed",
    "fillcolor": "#FFFFFF",
    "color": "#999999",
    "fontcolor": "#777777",
}  # an eqn whose results nothing reads


RANKDIRS = ("TB", "LR", "BT", "RL")
MAX_DEPTH = (
    2  # every drawer opens two levels of nesting (calls, loops, fusions) by default
)


def check_rankdir(rankdir: str, who: str) -> None:
    """Raises ValueError unless `rankdir` is one of Graphviz's four directions."""
    if rankdir not in RANKDIRS:
        raise ValueError(
            f'{who}: `rankdir` must be one of "TB" (top to bottom), "LR" (left '
            f'to right), "BT" or "RL"; got {rankdir!r}.'
        )


def check_max_depth(max_depth: int | None, who: str) -> None:
    """Raises ValueError unless `max_depth` is a whole number >= 0 or None."""
    if max_depth is not None and (
        isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0
    ):
        raise ValueError(
            f"{who}: `max_depth` must be a whole number >= 0 (0 draws "
            f"every nested part as one node) or None; got {max_depth!r}."
        )


def check_count(value: int, name: str, who: str) -> None:
    """Raises ValueError unless `value` (option `name`) is a positive whole number."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"{who}: `{name}` must be a positive whole number; got {value!r}."
        )


NOT_COUNTED = "not counted"  # a figure no rule knows how to count


def si(value: float | None, unit: str = "") -> str:
    """`1.37 G` style numbers; None reads "not counted"."""
    if value is None:
        return NOT_COUNTED
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}".rstrip()


def plural(n: int, word: str) -> str:
    """``"1 equation"``, ``"2 equations"``: counts in titles and labels read as English."""
    return f"{n} {word}{'s' * (n != 1)}"


def family(op: str) -> str:
    """The family of a jaxpr primitive or an (Stable)HLO opcode, a key of `FAMILIES`."""
    name = op.lower().strip('"').rsplit(".", 1)[-1].replace("-", "_")
    for suffix in ("_start", "_done"):  # async collectives: all-reduce-start
        name = name.removesuffix(suffix)
    if name in _MEMBERS:
        return _MEMBERS[name]
    if name.startswith("custom_call"):  # custom-call:__cublas$gemm, a library kernel
        return (
            "matmul"
            if any(k in name for k in ("gemm", "matmul", "conv", "dot"))
            else "other"
        )
    if name.startswith(("reduce", "cum", "arg")):
        return "reduction"
    if name.startswith(("random", "rng", "threefry")):
        return "random"
    return "other"


def node_attrs(op: str) -> dict[str, str]:
    """Graphviz node attributes for an op of `op`'s family; collectives stand out."""
    fam = FAMILIES[family(op)]
    attrs = {"fillcolor": fam.fill, "color": fam.border}
    if family(op) == "collective":
        attrs |= {"penwidth": "3", "shape": "box", "style": "rounded,filled,bold"}
    return attrs


def graph_attrs(title: str, rankdir: str = "TB", subtitle: str = "") -> dict[str, str]:
    """Graph attributes: the title (and a subtitle line) on top, slide-sized fonts."""
    label = text_label(title, subtitle) if subtitle else title
    return {
        "label": label,
        "labelloc": "t",
        "labeljust": "c",
        "fontname": FONT,
        "fontsize": "20",
        "rankdir": rankdir,
        "nodesep": "0.25",
        "ranksep": "0.35",
        "newrank": "true",
        "bgcolor": "white",
    }


def text_label(head: str, *lines: str) -> str:
    """A multi-line label: `head`, then each non-empty line (plain text: the embedded
    Graphviz renders no HTML-like labels)."""
    import graphviz

    parts = [head, *(line for line in lines if line)]
    text = "\\n".join(part.replace("\\", "\\\\") for part in parts)
    return graphviz.nohtml(text)  # "<lambda>" is a name, not an HTML label


def add_legend(graph, families: Iterable[str]) -> None:
    """Add a row of small swatches (`legend0`, ...) for the families used, at the end."""
    used = [name for name in FAMILIES if name in set(families)]
    if not used:
        return
    with graph.subgraph(name="legend") as g:
        g.attr(rank="sink")
        for i, name in enumerate(used):
            g.node(
                f"legend{i}",
                FAMILIES[name].label,
                fontsize="10",
                margin="0.06,0.02",
                height="0.2",
                fillcolor=FAMILIES[name].fill,
                color=FAMILIES[name].border,
                style="filled",
                shape="box",
            )
        for i in range(len(used) - 1):
            g.edge(f"legend{i}", f"legend{i + 1}", style="invis")


class Canvas:
    """A `graphviz.Digraph` being filled: fresh ids, clusters, edges drawn last, a legend.

    Edges are kept until `finish`, so declaring one never pulls a node into the cluster
    being drawn, and a repeated edge is drawn once.
    """

    def __init__(self, graph: Any, labels: bool = True) -> None:
        self.graph, self.labels = graph, labels
        self.ids = itertools.count()
        self.edges: dict[tuple[str, str], str] = {}
        self.families: set[str] = set()
        self.folded: set[str] = set()  # nodes for many values: edges unlabelled

    def new_id(self, prefix: str) -> str:
        """A node or cluster id never used before: `eqn7`, `cluster_8`."""
        return f"{prefix}{next(self.ids)}"

    def edge(self, src: str, dst: str, label: str = "") -> None:
        """Remember an edge (self-loops dropped); the first label given wins, and an
        edge to or from a folded node has none (its values have many types)."""
        if src != dst:
            folded = src in self.folded or dst in self.folded
            self.edges.setdefault((src, dst), "" if folded else label)

    @contextlib.contextmanager
    def cluster(
        self, g: Any, label: str, attrs: dict, enabled: bool = True
    ) -> Iterator[Any]:
        """A labelled cluster inside `g` (or `g` itself when not `enabled`)."""
        if not enabled:
            yield g
            return
        with g.subgraph(name=self.new_id("cluster_")) as c:
            c.attr(label=label, **attrs)
            yield c

    def finish(self) -> None:
        """Draw the remembered edges and a legend of the families used. Edges of a
        folded node do not pull the layout (50 of them fan out from one box: as
        constraints they skew the picture and slow Graphviz tenfold)."""
        for (src, dst), label in self.edges.items():
            loose = src in self.folded or dst in self.folded
            self.graph.edge(
                src,
                dst,
                label=label if self.labels and label else None,
                constraint="false" if loose else None,
            )
        add_legend(self.graph, self.families)
