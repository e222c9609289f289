"""Upload a report to S3; boto3 was never installed in this environment."""

import boto3


def upload(path: str, bucket: str) -> None:
    client = boto3.client("s3")
    client.upload_file(path, bucket, path)


if __name__ == "__main__":
    upload("report.csv", "reports")
