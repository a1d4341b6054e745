"""Request and response bodies of the access handoff routes. No field of the details shows in
a ``repr`` (``Field(repr=False)``): a logged model leaks nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from gpux_contracts.leases import LeaseStatus
from gpux_gateway.domain.handoff import MAX_NOTES, MAX_URL, AccessDetails, access_details
from gpux_gateway.entrypoints.schemas import Strict, examples

LEASE_ID = "01JWQY0PRGDP55WV50HQP4J00Y:b1"
SSH = {"host": "203.0.113.24", "port": 22, "user": "ubuntu"}
"""The SSH details of the examples (a documentation address)."""
NOTES = "CUDA 12.4 and PyTorch 2.7 preinstalled; /data is a 2 TB NVMe scratch disk."


class AccessIn(Strict):
    """How the buyer reaches the machines: `host` + `port` + `user` (SSH), or `endpoint_url`."""

    model_config = examples(
        {**SSH, "notes": NOTES},
        {"endpoint_url": "https://jupyter.example.com/lab?token=5d0c1b", "notes": ""},
    )

    host: str | None = Field(
        default=None, max_length=253, repr=False, description="A host name or an IP address."
    )
    port: int | None = Field(default=None, ge=1, le=65535, repr=False)
    user: str | None = Field(default=None, max_length=64, repr=False, description="The login.")
    endpoint_url: str | None = Field(
        default=None,
        max_length=MAX_URL,
        repr=False,
        description="An https (or http) URL: a notebook, a web console.",
    )
    notes: str = Field(
        default="", max_length=MAX_NOTES, repr=False, description="Anything else the buyer needs."
    )

    def details(self) -> AccessDetails:
        """The checked details (``domain.handoff.AccessDetailsError`` names a refused field)."""
        return access_details(
            host=self.host,
            port=self.port,
            user=self.user,
            endpoint_url=self.endpoint_url,
            notes=self.notes,
        )


class AccessPosted(BaseModel):
    """Posted access details were stored (sealed) for the lease's buyer."""

    model_config = examples(
        {
            "lease_id": LEASE_ID,
            "posted_at": "2025-06-02T09:33:40Z",
            "lease_status": "provisioning",
            "ready_reported": True,
        }
    )

    lease_id: str
    posted_at: datetime
    lease_status: LeaseStatus = Field(description="The lease's status as the view shows it.")
    ready_reported: bool = Field(
        description="Whether this post reported the lease ready to billing (`lease.ready` and"
        " the lease's `running` follow); false when it was reported before or needs no report."
    )


class AccessOut(BaseModel):
    """The access details the lease's seller posted, for its buyer."""

    model_config = examples(
        {
            "lease_id": LEASE_ID,
            **SSH,
            "endpoint_url": None,
            "notes": NOTES,
            "posted_at": "2025-06-02T09:33:40Z",
        }
    )

    lease_id: str
    host: str | None = Field(repr=False)
    port: int | None = Field(repr=False)
    user: str | None = Field(repr=False)
    endpoint_url: str | None = Field(repr=False)
    notes: str = Field(repr=False)
    posted_at: datetime = Field(description="When the seller last posted them.")


class FailureIn(Strict):
    """The seller cannot deliver a provisioning lease."""

    model_config = examples({"detail": "GPU 1 fails its burn-in test; we cannot deliver it."})

    detail: str = Field(default="", max_length=500, description="For the buyer: what went wrong.")


class FailureReported(BaseModel):
    """A failure report that billing will apply: the lease fails, nothing is charged."""

    model_config = examples(
        {
            "lease_id": LEASE_ID,
            "status": "failure_reported",
            "reported_at": "2025-06-02T09:36:02Z",
        }
    )

    lease_id: str
    status: Literal["failure_reported"] = "failure_reported"
    reported_at: datetime
