import sys

from hexlint.cli import main

sys.exit(main())
