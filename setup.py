"""Build hook: the lessons in notebooks/ ship inside the package as jaxtour/lessons/.

Everything else is declared in pyproject.toml. notebooks/ stays where it is (Colab
and Binder open the .ipynb files there by URL); a wheel gets a copy, which
`jaxtour lessons` and `jaxtour tour` read when there is no checkout around: each
NN_topic.py source (the tour executes it; `jaxtour lessons --instructor` makes the
instructor notebook from it) and NN_topic.ipynb, its student view (`jaxtour lessons`).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LESSONS = ("[0-9][0-9]_*.py", "[0-9][0-9]_*.ipynb")


class BuildWithLessons(build_py):
    """`build_py`, then the lessons copied into build/lib/jaxtour/lessons/."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads ./notebooks directly
        target = Path(self.build_lib, "jaxtour", "lessons")
        self.mkpath(str(target))
        for pattern in LESSONS:
            for lesson in sorted(Path("notebooks").glob(pattern)):
                self.copy_file(str(lesson), str(target / lesson.name))


setup(cmdclass={"build_py": BuildWithLessons})
