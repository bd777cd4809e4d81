// Vite turns CSS imports into injected styles.
declare module '*.css';
