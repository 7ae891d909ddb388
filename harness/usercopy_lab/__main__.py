"""python3 -m usercopy_lab COMMAND: the lab's one command line (cli/)."""
import sys

# Debian packages every command loads; a missing one is one line and exit 2
# (make deps installs them).  pexpect (booting), matplotlib (the chart
# pages), PyYAML and lava-common (LAVA) are loaded only by the commands
# that need them, and those say so themselves.
NEEDED = {"tabulate": "python3-tabulate", "jsonschema": "python3-jsonschema",
          "jinja2": "python3-jinja2"}

try:
    from .cli import main
except ModuleNotFoundError as exc:
    if exc.name not in NEEDED:
        raise
    print(f"usercopy-lab: {NEEDED[exc.name]} is needed (make deps)", file=sys.stderr)
    sys.exit(2)

sys.exit(main())
