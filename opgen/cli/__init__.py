"""The ``opgen`` command: thin typer commands that forward to plain functions (``opgen.service``
and the modules it calls), one module per command group; ``opgen.cli.output`` holds what they share.

Exit codes:

* 0 success;
* 1 a failure: nothing admitted, a rejection, a stale or failing entry, a regression, or an error
  found once the command line parsed (no spec for the op, an unknown target name, ``--source``
  without ``--op``, a missing file), printed on stderr without a traceback;
* 2 a usage error: the command line does not parse (an unknown command or option, a missing
  argument, a value of the wrong type or out of range); click prints the usage and the error on stderr;
* 3 the file exchange (``--provider file``) wrote a prompt and is waiting for its answer;
* 130 or 143: ``synthesize`` was stopped by Ctrl-C (SIGINT) or SIGTERM; what it admitted before is whole.

Output: results on stdout, messages and progress on stderr. On a terminal, long commands show a
live progress bar; elsewhere (CI logs, pipes) one line per finished item. With ``--json`` stdout
holds one JSON document and nothing else.
"""

from __future__ import annotations

import typer

from opgen.cli.bench import bench
from opgen.cli.compile import compile_command
from opgen.cli.conformance import conformance_app
from opgen.cli.corpus import corpus
from opgen.cli.listing import list_, show
from opgen.cli.nightly import nightly_app, report_command
from opgen.cli.output import EXIT_AWAITING, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from opgen.cli.pipeline import pipeline_export
from opgen.cli.spec import spec_app
from opgen.cli.synthesize import synthesize
from opgen.cli.verify import lint, verify

__all__ = ["app", "main", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_AWAITING"]

EPILOG = (f"Exit codes: {EXIT_OK} success; {EXIT_FAILED} failure (nothing admitted, a rejection, a stale or failing "
          f"entry, an error found after parsing); {EXIT_USAGE} usage error (unknown option, missing argument, bad "
          f"value); {EXIT_AWAITING} the file exchange is waiting for an answer; 130/143 synthesize stopped by "
          f"Ctrl-C/SIGTERM. With --json, stdout holds only JSON.")

app = typer.Typer(add_completion=False, no_args_is_help=True, epilog=EPILOG,
                  help="LLM-written native operator kernels, admitted only when proven.")
app.command()(synthesize)
app.command()(verify)
app.command()(lint)
app.command()(corpus)
app.command("list")(list_)
app.command()(bench)
app.command("pipeline")(pipeline_export)
app.command()(show)
app.add_typer(nightly_app, name="nightly")
app.add_typer(spec_app, name="spec")
app.command("report")(report_command)
app.command("compile")(compile_command)
app.add_typer(conformance_app, name="conformance")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
