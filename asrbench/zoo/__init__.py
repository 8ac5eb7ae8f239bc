"""The zoo: datasets and models stored once, content-addressed, on S3-compatible or local remotes.

Layout of a remote (under its prefix):
  objects/sha256/<aa>/<64 hex>           immutable file contents, named by their SHA-256
  entries/<kind>s/<ID>/versions/<V>.json  one immutable manifest per version, published last
  entries/<kind>s/<ID>/latest.json        pointer to the newest version
"""

from asrbench.zoo.errors import ZooError
from asrbench.zoo.pull import pull
from asrbench.zoo.push import push

__all__ = ["ZooError", "pull", "push"]
