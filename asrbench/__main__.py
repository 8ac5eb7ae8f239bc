import sys

from asrbench.cli import main

sys.exit(main())
