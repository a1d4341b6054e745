-- A counter per book (gpu, tier), moved by every transaction that changes the book: an
-- instance that keeps the book in memory at version v knows it is current while this says v.
CREATE TABLE book_versions (
    gpu     text NOT NULL,
    tier    text NOT NULL,
    version bigint NOT NULL CHECK (version > 0),
    PRIMARY KEY (gpu, tier)
);
CREATE INDEX offers_on_book ON offers (gpu, (body->>'tier')) WHERE on_book;
