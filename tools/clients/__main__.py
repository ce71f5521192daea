"""`python -m tools.clients`: regenerate clients/python and clients/typescript."""

import sys

from tools.clients import main

sys.exit(main())
