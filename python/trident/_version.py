# SPDX-License-Identifier: Apache-2.0
"""trident's version: the package's, the wheel's and libtrident's (configure.ac's AC_INIT; the suite's
test_install.py checks that the loaded libtrident reports the same)."""
__version__ = "0.1.0"
