"""Tests of the format adapters, one module per format, and the 9 x 9 conversion matrix."""
