/// The gallery page's inline style sheet: the page must work from `file://` with no network, so
/// nothing is linked. Tiles have a fixed frame, so the layout never moves while lazy thumbnails
/// load; each block of tiles skips layout and paint while off screen (`content-visibility`), so
/// a page of 100,000 tiles scrolls.
enum GalleryStyle {
    static let css = """
        :root{color-scheme:light dark;--bg:#f5f5f2;--fg:#1e1e20;--muted:#6a6a70;--card:#fff;--line:#dddcd5;\
        --bad:#b3261e;--check:#ececea}
        @media (prefers-color-scheme:dark){:root{--bg:#151517;--fg:#ececee;--muted:#9c9ca4;--card:#232327;\
        --line:#3b3b42;--bad:#ff8a80;--check:#2d2d32}}
        *{box-sizing:border-box}
        body{margin:0;padding:24px 28px 48px;background:var(--bg);color:var(--fg);\
        font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
        h1{font-size:22px;margin:0 0 6px}
        h2{font-size:16px;margin:26px 0 10px}
        h2 .n,summary .n{color:var(--muted);font-weight:normal}
        .summary{margin:0 0 10px;font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px;\
        color:var(--muted);overflow-wrap:anywhere}
        .counts{display:flex;flex-wrap:wrap;gap:8px;margin:0;padding:0;list-style:none}
        .counts li{background:var(--card);border:1px solid var(--line);border-radius:999px;padding:2px 12px}
        .counts .failed,.counts .failed a{color:var(--bad)}
        details.class{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:0 0 8px;padding:6px 12px}
        details.class summary{cursor:pointer;font-weight:600;color:var(--bad)}
        details.class ol{margin:6px 0 4px;padding-left:28px}
        details.class li{margin:0 0 6px;overflow-wrap:anywhere}
        .reason{display:block}
        .url,.where{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;color:var(--muted)}
        .where{margin-left:8px}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:14px;margin-bottom:14px;\
        content-visibility:auto;contain-intrinsic-size:auto 2400px}
        .tile{margin:0;background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden;min-width:0}
        .frame{display:flex;align-items:center;justify-content:center;height:200px;padding:6px;text-decoration:none;\
        background:repeating-conic-gradient(var(--check) 0 25%,var(--card) 0 50%) 0 0/16px 16px}
        .frame img{display:block;max-width:100%;max-height:100%;width:auto;height:auto}
        .ph{flex-direction:column;color:var(--muted);background:var(--card);border-bottom:1px dashed var(--line)}
        .ph b{font-size:22px;letter-spacing:.04em}
        .ph span{font-size:12px;margin-top:4px;padding:0 8px;text-align:center;overflow-wrap:anywhere}
        figcaption{padding:7px 10px 9px;border-top:1px solid var(--line)}
        figcaption .name{display:block;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;\
        color:inherit;text-decoration:none}
        figcaption .meta{display:block;font-size:12px;color:var(--muted)}
        .badge{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 4px;margin-left:4px}
        """
}
