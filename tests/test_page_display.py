"""What a Diagram puts in a notebook's display data: its SVG always, its page when it helps.

A picture nested by the user's calls with calls folded, or over twice a slide's width
or height, carries its page as
``text/html`` (the pan, zoom and fold of `Diagram.save(".html")`, inline, fetching
nothing); a small one carries its SVG alone. Two displays in one notebook share no id.
The browser half (an nbconvert export opened in Chromium) is test_page_display_browser.py.
"""

import re

import jax.numpy as jnp
import pytest

from jaxtour import Diagram, viz

# a reference a browser would fetch: src/href to a host, a CSS url() or @import, a <link>
NETWORK = re.compile(
    r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import|<link""",
    re.I,
)
BUNDLE = {"text/plain", "image/svg+xml", "text/html"}


def layer(x, w):
    return jnp.tanh(x @ w + 1.0) * 0.5 + jnp.sin(x @ w)


def block(x, w):
    for _ in range(3):
        x = layer(x, w)
    return x


def net(x, w):
    return jnp.sum(block(block(x, w), w) ** 2)


def nested() -> Diagram:
    """44 equations in six calls of `layer` inside two of `block`, some folded."""
    return viz.draw_jaxpr(net, max_eqns=30)(jnp.ones((2, 3)), jnp.ones((3, 3)))


@pytest.fixture(scope="module")
def drawn():
    diagram = nested()
    return diagram, diagram._repr_mimebundle_(), diagram._repr_mimebundle_()


def test_a_nested_picture_carries_its_svg_and_its_page(drawn):
    diagram, bundle, _ = drawn
    assert diagram.interactive and "calls folded" in diagram.title
    assert set(bundle) == BUNDLE
    assert bundle["image/svg+xml"] == diagram.svg()  # what decks and GitHub show
    page = bundle["text/html"]
    assert page.startswith("<div class='jt-page'") and not NETWORK.search(page)
    assert "<!DOCTYPE" not in page and "document.body" not in page
    # the page holds the whole program: every equation, the folded ones too
    assert len(re.findall(r"<title>eqn\d+</title>", page)) == 44
    assert len(re.findall(r"<title>eqn\d+</title>", diagram.svg())) < 44


def test_two_displays_share_no_id(drawn):
    _, one, two = drawn
    ids = [re.findall(r"""\bid=["']([^"']+)""", b["text/html"]) for b in (one, two)]
    assert len(ids[0]) > 40 and not set(ids[0]) & set(ids[1])
    root = ids[0][0]
    assert all(i.startswith(root) for i in ids[0])  # the SVG's ids carry the div's


def test_a_picture_over_two_slides_wide_carries_its_page_a_smaller_one_does_not():
    def chain(n: int) -> Diagram:
        return Diagram("digraph { rankdir=LR; " + "->".join(map(str, range(n))) + " }")

    wide, small = chain(30), chain(12)
    assert wide.size_px[0] > 2560 > small.size_px[0] > 1280 and wide.whole is None
    assert set(wide._repr_mimebundle_()) == BUNDLE
    assert set(small._repr_mimebundle_()) == {"text/plain", "image/svg+xml"}
    # a front end that asks for no HTML gets none drawn
    assert "text/html" not in wide._repr_mimebundle_(exclude={"text/html"})
