"""S3-compatible object storage on loopback for the lake's tests: moto's standalone server, with IAM
enforced (every request must be signed by a key it issued), a bucket, a read-write user and a
read-only user. Nothing else installs here (see the brief's environment facts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

import boto3

from shipsync.serving import stop_process, wait_until_answers
from shipsync_sandbox.serving import free_port
from support.waiting import HANG_S

BUCKET = "shipsync-lake"
_ADMIN = {"aws_access_key_id": "admin", "aws_secret_access_key": "admin-secret", "region_name": "us-east-1"}
# The requests moto answers before it enforces IAM: the bucket, then two users with a policy and a key each.
_SETUP_ACTIONS = 7


@dataclass(frozen=True)
class Keys:
    key_id: str
    secret: str

    def environment(self, endpoint: str) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
        }


class ObjectStorage:
    """`with ObjectStorage(tmp) as s3:` a moto server; `s3.writer` and `s3.reader` keys; `s3.object_keys()` lists the bucket."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "moto.log").open("wb")
        moto = str(Path(sys.executable).with_name("moto_server"))
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_SETUP_ACTIONS)}
        self._process = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(self.port)], stdout=log, stderr=subprocess.STDOUT, env=env)
        wait_until_answers(f"{self.endpoint}/moto-api/", self._process, timeout_s=HANG_S)
        s3 = boto3.client("s3", endpoint_url=self.endpoint, **_ADMIN)
        iam = boto3.client("iam", endpoint_url=self.endpoint, **_ADMIN)
        s3.create_bucket(Bucket=BUCKET)
        self.writer = self._user(iam, "lake-writer", ["s3:*"])
        self.reader = self._user(iam, "lake-reader", ["s3:GetObject", "s3:ListBucket", "s3:GetBucketLocation"])
        return self

    def _user(self, iam: object, name: str, actions: list[str]) -> Keys:
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
        iam.create_user(UserName=name)  # type: ignore[attr-defined]
        iam.put_user_policy(UserName=name, PolicyName=f"{name}-policy", PolicyDocument=json.dumps(policy))  # type: ignore[attr-defined]
        key = iam.create_access_key(UserName=name)["AccessKey"]  # type: ignore[attr-defined]
        return Keys(key["AccessKeyId"], key["SecretAccessKey"])

    def object_keys(self) -> list[str]:
        s3 = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.writer.key_id,
            aws_secret_access_key=self.writer.secret,
            region_name="us-east-1",
        )
        found: list[str] = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            found += [item["Key"] for item in page.get("Contents", [])]
        return found

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._process is not None:
            stop_process(self._process)
