"""Read the database host from a config dict that has no 'database' section."""

CONFIG = {"server": {"port": 8080}, "logging": {"level": "INFO"}}


def database_host(config: dict) -> str:
    return config.get("database").get("host", "localhost")


print(database_host(CONFIG))
