settings = {"database_url": "sqlite:///app.db"}
