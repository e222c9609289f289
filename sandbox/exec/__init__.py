"""Running one command in a sandbox: the `Sandbox` protocol, `LocalSandbox`, `DockerSandbox` and what they share.

`backends.open_sandbox` picks the backend; `interpreter` finds the Python a workspace's tests run with; `image`,
`docker_engine`, `cgroup` and `pump` are the parts the two backends are built from.
"""
