"""Alembic environment for convstore.

Runs on a connection handed over in ``config.attributes["connection"]`` (the
store and the tests do that), else on the URL from ``-x db=URL``, $CONVSTORE_DB
or alembic.ini.
"""

import os
from logging.config import fileConfig

from alembic import context

from store.db import VERSION_TABLE, create_engine
from store.schema import metadata

config = context.config
if config.config_file_name and not config.attributes.get("connection"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def include_name(name, type_, parent_names):
    # The database may be shared with other applications: compare only our tables.
    if type_ == "table":
        return name in metadata.tables
    # The full-text index is each backend's own kind (GIN on an expression, FULLTEXT), made by
    # revisions 0006 and 0009 outside the ORM's vocabulary; SQLite's is a virtual table, not listed here.
    return not (type_ == "index" and name == "ix_search_body")


def run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        include_name=include_name,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def url() -> str:
    return (
        context.get_x_argument(as_dictionary=True).get("db")
        or os.environ.get("CONVSTORE_DB")
        or config.get_main_option("sqlalchemy.url")
    )


if context.is_offline_mode():
    context.configure(url=url(), target_metadata=metadata, version_table=VERSION_TABLE, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif (connection := config.attributes.get("connection")) is not None:
    run(connection)
else:
    engine = create_engine(url())
    with engine.begin() as conn:
        run(conn)
    engine.dispose()
