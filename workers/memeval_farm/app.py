"""The app `celery -A memeval_farm.app worker` and `memeval worker` load, from `MEMEVAL_*`."""

from memeval_farm import preflight  # noqa: F401  registers the preflight control command workers answer
from memeval_farm.config import make_app
from memeval_farm.settings import load_settings

app = make_app(load_settings())
