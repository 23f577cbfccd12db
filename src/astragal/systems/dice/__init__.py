"""The general dice notation (``4d6kh3+2``, ``10d10>=8``, ``d6!``) with exact odds; in progress."""
