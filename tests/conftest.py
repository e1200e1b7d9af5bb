"""Put tests/ on sys.path so that test modules can `from corpus import CORPUS`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
