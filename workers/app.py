"""The app `celery -A workers.app worker` and `memeval worker` load, from `MEMEVAL_*`."""

from workers import preflight  # noqa: F401  registers the preflight control command workers answer
from workers.config import make_app
from workers.settings import load_settings

app = make_app(load_settings())
