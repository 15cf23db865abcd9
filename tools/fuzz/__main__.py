"""``python tools/fuzz ...``: see fuzz/cli.py (``--help``)."""
import os
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--worker" in sys.argv:                 # a worker imports only what its backend needs
    from fuzz.run import worker_main
    worker_main()
else:
    from fuzz.cli import main
    sys.exit(main())
