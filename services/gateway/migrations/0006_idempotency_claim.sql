-- Claiming an Idempotency-Key in one round trip: the key's transaction-scoped advisory lock,
-- then the response kept under it. In READ COMMITTED each statement of a VOLATILE function
-- takes a fresh snapshot, so the SELECT after the lock sees a response that a concurrent
-- request with the same key committed while this one waited for the lock.
CREATE FUNCTION idempotency_claim(p_scope text, p_key text, p_not_before timestamptz)
RETURNS TABLE (fingerprint text, status_code integer, body json)
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT  -- the gateway's schema, whatever the caller's path
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_scope || chr(31) || p_key, 0));
    RETURN QUERY
        SELECT i.fingerprint, i.status_code, i.body
        FROM idempotency AS i
        WHERE i.scope = p_scope AND i.key = p_key AND i.created_at >= p_not_before;
END
$$;
