"""`python -m jaxtour.lesson [DIR]`: write the student notebooks beside the lesson sources.

What `make notebooks` and Binder's postBuild run: each ``DIR/NN_topic.ipynb`` (default
DIR: ./notebooks) becomes the student view of ``DIR/NN_topic.py``.
"""

from __future__ import annotations

import sys

from jaxtour.lesson import write_student_notebooks


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: python -m jaxtour.lesson [DIR]", file=sys.stderr)
        return 2
    written = write_student_notebooks(*argv)
    print(
        f"wrote {len(written)} student notebooks: {', '.join(p.name for p in written)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
