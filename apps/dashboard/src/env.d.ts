/** Stylesheets are imported for their side effect: vite bundles them into the CSS file. */
declare module '*.css';
