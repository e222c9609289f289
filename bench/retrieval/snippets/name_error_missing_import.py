"""Uses os.path without importing os."""


def config_path(base: str) -> str:
    return os.path.join(base, "settings.toml")


print(config_path("/etc/app"))
