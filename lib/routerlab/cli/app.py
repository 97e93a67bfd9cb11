"""The ``routerlab`` application and its command groups; the modules of this package add
their commands to them."""

import typer

# Help and usage errors are click's plain text: typer's rich boxes load rich's markdown and
# traceback modules first, a third of `routerlab --help`'s time (issue #14). An unexpected
# error prints Python's own traceback: typer's pretty one also prints every local (whole
# tables).
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"max_content_width": 100},
                  help="Measure and teach software routers: PASTRAMI statistics, a namespace "
                       "testbed, reference routers and the figures of published work.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: commands that print a figure.")
app.add_typer(bench_app, name="bench")
p4_app = typer.Typer(no_args_is_help=True, help="P4 programs on bmv2: build them, check the course exercises.")
app.add_typer(p4_app, name="p4")
click_app = typer.Typer(no_args_is_help=True, help="The Click course: check the exercises, read the elements' manuals.")
app.add_typer(click_app, name="click")
notebooks_app = typer.Typer(no_args_is_help=True, help="The notebooks: copy them out to edit and run.")
app.add_typer(notebooks_app, name="notebooks")
engines_app = typer.Typer(no_args_is_help=True, help="Click, FastClick, bmv2 and p4c built from pinned upstream sources.")
app.add_typer(engines_app, name="engines")
