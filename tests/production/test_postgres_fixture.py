"""The `postgres` fixture: a real server, real password logins, stable dumps."""

from __future__ import annotations

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from .conftest import PostgresServer


async def test_sqlalchemy_writes_are_counted_and_change_the_dump(postgres: PostgresServer):
    """Rows written through SQLAlchemy's async engine show in `row_counts` and the dump."""
    postgres.create_database("fixture_rows")
    engine = create_async_engine(postgres.url("fixture_rows"))
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE notes (id serial PRIMARY KEY, body text)"))
            await connection.execute(
                text("INSERT INTO notes (body) VALUES (:body)"),
                [{"body": "first"}, {"body": "second"}],
            )
        assert postgres.row_counts("fixture_rows", ["notes"]) == {"notes": 2}
        before = postgres.dump_checksum("fixture_rows")
        assert postgres.dump_checksum("fixture_rows") == before

        async with engine.begin() as connection:
            await connection.execute(text("INSERT INTO notes (body) VALUES ('third')"))
        assert postgres.row_counts("fixture_rows", ["notes"]) == {"notes": 3}
        assert postgres.dump_checksum("fixture_rows") != before
    finally:
        await engine.dispose()


async def test_a_wrong_password_is_refused(postgres: PostgresServer):
    """The server checks passwords: the fixture's authentication is real."""
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(
            host=postgres.host,
            port=postgres.port,
            user=postgres.user,
            password=postgres.password + "-wrong",
            database="postgres",
        )
