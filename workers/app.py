"""The app `celery -A workers.app worker` and `memeval worker` load, from `MEMEVAL_*`."""

from workers.config import make_app
from workers.settings import load_settings

app = make_app(load_settings())
