"""The ``routerlab`` application and its command groups; the modules of this package add
their commands to them (click decorators: ``@app.command()``, ``@click.option``, and
:func:`argument` for a positional argument with a help text). The application loads those
modules by name (:data:`COMMAND_MODULES`) the first time it needs its commands, so that
nothing of the command line imports a command's module, and so the library, before it runs."""

import functools
import importlib
import logging

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


#: The modules of this package that add commands, in the order their commands are listed.
COMMAND_MODULES = ("analysis", "bench", "campaign", "click", "course", "engines", "figures", "measuring", "p4",
                   "report")


class App(Group):
    """The ``routerlab`` group: its commands are those :data:`COMMAND_MODULES` add, loaded
    once, the first time a command is listed or looked up."""

    _loaded = False

    def load(self):
        """Import every command module (once): each adds its commands to this group."""
        if not App._loaded:
            App._loaded = True
            for name in COMMAND_MODULES:
                importlib.import_module(f"{__package__}.{name}")

    def list_commands(self, ctx):
        self.load()
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        self.load()
        return super().get_command(ctx, name)


def _print_version(ctx, param, value):
    """``routerlab --version``: the installed version, or run from a clone its last release
    tag and its commit (:func:`routerlab.version.code_version`)."""
    if not value or ctx.resilient_parsing:
        return
    from routerlab.version import code_version

    click.echo(f"routerlab {code_version()}")
    ctx.exit()


class _Warnings(logging.Handler):
    """The library's warnings on stderr, each one line as written, as it once printed them."""

    def emit(self, record):
        click.echo(self.format(record), err=True)


def show_warnings():
    """Show the library's warnings (:mod:`logging` under ``routerlab``: a generator
    replaced, loss attribution off) on stderr from now on; once per process."""
    log = logging.getLogger("routerlab")
    if not any(isinstance(h, _Warnings) for h in log.handlers):
        log.addHandler(_Warnings(logging.WARNING))


def _show_warnings():
    """Before any command: the library's warnings are the command line's to show."""
    show_warnings()


# Help and usage errors are click's plain text, at most 100 columns, with the defaults.
app = App("routerlab", no_args_is_help=True, callback=_show_warnings,
            context_settings={"max_content_width": 100, "show_default": True},
            params=[click.Option(["--version"], is_flag=True, expose_value=False, is_eager=True,
                                 callback=_print_version,
                                 help="Print the version (from a clone, its last release and commit) and exit.")],
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
