-- What the catalog last published to each of its compacted topics (physical topic name, so
-- namespaces never share a row). A restart with the same data version publishes nothing;
-- delete a row to force the next check to publish that topic again.
CREATE TABLE published (
    topic        text        PRIMARY KEY,
    data_version integer     NOT NULL CHECK (data_version >= 1),
    items        integer     NOT NULL CHECK (items >= 0),
    published_at timestamptz NOT NULL
);
