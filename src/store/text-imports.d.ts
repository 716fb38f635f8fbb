declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "*.c" {
  const text: string;
  export default text;
}
