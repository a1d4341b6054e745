// A page's h1. After a navigation within the app (not on the first page) it takes the focus,
// so a screen reader announces the new page and the keyboard starts from its top; it does so
// when it appears, which for a page loaded on demand is after its code arrived.
import { useEffect, useRef, type ReactNode } from "react";

import { takeNavigationFocus } from "./router";

export function PageHeading({ children }: { readonly children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (takeNavigationFocus()) heading.current?.focus();
  }, []);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}
