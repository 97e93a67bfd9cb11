"""The ``routerlab`` application and its command groups; the modules of this package add
their commands to them (click decorators: ``@app.command()``, ``@click.option``, and
:func:`argument` for a positional argument with a help text)."""

import functools

import click

# Written with click itself, not typer: typer converts every parameter through pydantic
# when a command runs, a tenth of a second of every command (issue #14).


class Argument(click.Argument):
    """A positional argument with a help text, listed under "Arguments:" in its command's
    help (click before 8.5 takes no help for an argument)."""

    def __init__(self, *args, help: str | None = None, **kw):
        super().__init__(*args, **kw)
        self.help = help

    def help_row(self, ctx) -> tuple[str, str]:
        return self.make_metavar(ctx), (self.help or "") + ("  [required]" if self.required else "")


#: ``@argument("name", ..., help="...")``: a positional argument of a routerlab command.
argument = functools.partial(click.argument, cls=Argument)


class Command(click.Command):
    """A command whose help lists its arguments, with their help, above its options."""

    def format_help(self, ctx, formatter):
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        rows = [p.help_row(ctx) for p in self.get_params(ctx) if isinstance(p, Argument)]
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        self.format_options(ctx, formatter)
        self.format_epilog(ctx, formatter)


class Group(click.Group):
    """A command group: its commands are :class:`Command`, its subgroups of this class; its
    help lists the commands in the order they were added, then the subgroups (click would
    sort them all by name)."""

    command_class = Command
    group_class = type

    def list_commands(self, ctx):
        return sorted(self.commands, key=lambda name: isinstance(self.commands[name], click.Group))


def _print_version(ctx, param, value):
    """``routerlab --version``: the version and, run from a clone, its commit."""
    if not value or ctx.resilient_parsing:
        return
    from routerlab.version import code_version

    click.echo(f"routerlab {code_version()}")
    ctx.exit()


# Help and usage errors are click's plain text, at most 100 columns, with the defaults.
app = Group("routerlab", no_args_is_help=True,
            context_settings={"max_content_width": 100, "show_default": True},
            params=[click.Option(["--version"], is_flag=True, expose_value=False, is_eager=True,
                                 callback=_print_version,
                                 help="Print the version (from a clone, with its commit) and exit.")],
            help="Measure and teach software routers: PASTRAMI statistics, a namespace "
                 "testbed, reference routers and the figures of published work.")


def _group(name: str, help: str) -> Group:
    group = Group(name, help=help)
    app.add_command(group)
    return group


campaign_app = _group("campaign", "Campaign files: the steps that make a dataset, shown or run.")
bench_app = _group("bench", "Benchmarks: commands that print a figure.")
p4_app = _group("p4", "P4 programs on bmv2: build them, check the course exercises.")
click_app = _group("click", "The Click course: check the exercises, read the elements' manuals.")
course_app = _group("course", "The courses' machine measured, and the instructor's guide made from it.")
notebooks_app = _group("notebooks", "The notebooks: copy them out to edit and run.")
engines_app = _group("engines", "Click, FastClick, bmv2 and p4c built from pinned upstream sources.")
