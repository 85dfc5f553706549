"""Data migrations tested with the code of the revision before (see test_migrate_data.py)."""
