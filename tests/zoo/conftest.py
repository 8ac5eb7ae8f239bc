"""Zoo test fixtures; they live in zoo_support.py so that tests can import its helpers too."""

from zoo_support import s3_env, seaweed, synth, zoo_cfg  # noqa: F401
